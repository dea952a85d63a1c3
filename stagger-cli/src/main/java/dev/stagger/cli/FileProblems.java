package dev.stagger.cli;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Why a file cannot be written or a directory created, in words: Java's file exceptions often
 * carry only the path ({@code NoSuchFileException: /proc/nope}), which reads like no reason at all.
 */
final class FileProblems {
    private FileProblems() {
    }

    /**
     * Checks, before any work is done, that {@code file} can be written: its directory exists and
     * the file can be opened for writing. Nothing existing is changed; a file created by the check
     * is removed again.
     *
     * @return why it cannot be written, or empty when it can
     */
    static Optional<String> whyNotWritable(Path file) {
        Path absolute = file.toAbsolutePath();
        Path dir = absolute.getParent();
        if (Files.isDirectory(absolute)) {
            return Optional.of(file + " is a directory");
        }
        if (dir != null && !Files.isDirectory(dir)) {
            Path existing = dir;
            while (existing != null && !Files.exists(existing)) {
                existing = existing.getParent();
            }
            return Optional.of(existing != null && !Files.isDirectory(existing) ? existing + " is not a directory"
                    : "the directory " + dir + " does not exist");
        }
        boolean existed = Files.exists(absolute);
        try {
            FileChannel.open(absolute, StandardOpenOption.CREATE, StandardOpenOption.WRITE).close();
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(reason(e, absolute));
        } finally {
            if (!existed) {
                try {
                    Files.deleteIfExists(absolute);
                } catch (IOException ignored) {
                    // the probe could not be created either, or the file is the caller's next step anyway
                }
            }
        }
    }

    /** Creates {@code dir} and its parents, failing with an {@link IOException} whose message says why it cannot. */
    static Path createDirectories(Path dir) throws IOException {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IOException(dir + ": " + reason(e, dir), e);
        }
    }

    /** The reason in {@code e}, in words; {@code path} is what was being written or created. */
    static String reason(IOException e, Path path) {
        if (e instanceof FileSystemException fs && fs.getReason() != null && !fs.getReason().isBlank()) {
            return lowerFirst(fs.getReason()) + (fs.getFile() != null && !fs.getFile().equals(path.toString())
                    ? " (" + fs.getFile() + ")" : "");
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileAlreadyExistsException) {
            return "a file of that name exists and is not a directory";
        }
        if (e instanceof NotDirectoryException n) {
            return n.getFile() + " is not a directory";
        }
        if (e instanceof NoSuchFileException) {
            Path parent = path.toAbsolutePath().getParent();
            return parent != null && Files.isDirectory(parent)
                    ? "no such file or directory (" + parent + " exists, but its file system refuses new entries)"
                    : "no such file or directory";
        }
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null || message.equals(path.toString()) ? "" : ": " + message);
    }

    private static String lowerFirst(String s) {
        return s.length() > 1 && Character.isUpperCase(s.charAt(0)) && Character.isLowerCase(s.charAt(1))
                ? Character.toLowerCase(s.charAt(0)) + s.substring(1) : s;
    }
}
