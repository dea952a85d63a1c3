package dev.stagger.grpc;

import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/** Makes calls in tests: gRPC in real time, Stagger's waits on a virtual clock run as they fall due. */
final class Calls {
    private Calls() {
    }

    /** A unary call's answer: its value, or the status it ended with. */
    record Answer(String value, Status status) {
        boolean ok() {
            return status.isOk();
        }
    }

    static Answer unary(VirtualClock clock, Channel channel, MethodDescriptor<String, String> method, String request) {
        return unary(clock, channel, method, CallOptions.DEFAULT, request);
    }

    static Answer unary(VirtualClock clock, Channel channel, MethodDescriptor<String, String> method,
                        CallOptions options, String request) {
        Future<String> future = ClientCalls.futureUnaryCall(channel.newCall(method, options), request);
        drive(clock, future);
        try {
            return new Answer(future.get(), Status.OK);
        } catch (ExecutionException e) {
            return new Answer(null, Status.fromThrowable(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Runs due waits as they are scheduled until {@code future} completes ({@link Await#LIMIT} real-time guard). */
    static void drive(VirtualClock clock, Future<?> future) {
        Await.runUntilDone(future, () -> clock.pendingTasks() > 0, clock::runUntilIdle);
    }

    /** The status a blocking call ended with. */
    static Status statusOf(Runnable blockingCall) {
        try {
            blockingCall.run();
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    /** Records a retry's events. */
    static final class Events implements RetryListener {
        final List<RetryEvent.CallFinished> finished = new CopyOnWriteArrayList<>();
        final List<RetryEvent.RetryScheduled> scheduled = new CopyOnWriteArrayList<>();

        @Override
        public void onCallFinished(RetryEvent.CallFinished event) {
            finished.add(event);
        }

        @Override
        public void onRetryScheduled(RetryEvent.RetryScheduled event) {
            scheduled.add(event);
        }

        RetryEvent.CallFinished last() {
            return finished.get(finished.size() - 1);
        }
    }
}
