package dev.stagger.cli.demo;

import dev.stagger.jobs.JobState;
import java.util.ArrayList;
import java.util.List;

/**
 * A job's attempts in words, across re-drives: "4 failed · re-driven · succeeded on attempt 1".
 * The store keeps every failed attempt (numbered from 1 again after each re-drive); a number that
 * does not follow the one before marks a re-drive, and so does a current attempt that the failures
 * cannot explain (a job re-driven after its last failure).
 */
final class JobHistory {
    private JobHistory() {
    }

    /**
     * @param failedAttempts the attempt number of each recorded failure, oldest first
     * @param state the job's state now
     * @param attempt the job's attempt counter now (0 before its first claim; reset by a re-drive)
     */
    static String describe(List<Integer> failedAttempts, JobState state, int attempt) {
        List<Integer> failuresPerDrive = new ArrayList<>();
        int run = 0;
        int previous = 0;
        for (int a : failedAttempts) {
            if (a <= previous) { // numbering started again: re-driven in between
                failuresPerDrive.add(run);
                run = 0;
            }
            run++;
            previous = a;
        }
        failuresPerDrive.add(run);
        boolean redrivenSinceLastFailure = !failedAttempts.isEmpty() && switch (state) {
            case SUCCEEDED, RUNNING -> attempt <= previous;
            case AVAILABLE -> attempt < previous;
            case DEAD -> false;
        };
        if (redrivenSinceLastFailure) {
            failuresPerDrive.add(0);
        }
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < failuresPerDrive.size(); i++) {
            if (i > 0) {
                parts.add("re-driven");
            }
            if (failuresPerDrive.get(i) > 0) {
                parts.add(failuresPerDrive.get(i) + " failed");
            }
        }
        parts.add(switch (state) {
            case SUCCEEDED -> "succeeded on attempt " + attempt;
            case RUNNING -> "running attempt " + attempt;
            case AVAILABLE -> attempt == 0 && parts.isEmpty() ? "waiting for its first attempt" : "waiting for attempt " + (attempt + 1);
            case DEAD -> "dead";
        });
        return String.join(" · ", parts);
    }
}
