package dev.stagger.idempotency.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 over length-prefixed fields, so that no two different field lists hash the same input. */
public final class Digests {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final MessageDigest digest;

    private Digests() {
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime provides SHA-256", e);
        }
    }

    public static Digests sha256() {
        return new Digests();
    }

    /** Adds a field; null and "" hash differently. */
    public Digests add(String field) {
        if (field == null) {
            lengthPrefix(-1);
            return this;
        }
        return add(field.getBytes(StandardCharsets.UTF_8));
    }

    public Digests add(byte[] field) {
        lengthPrefix(field.length);
        digest.update(field);
        return this;
    }

    public Digests add(byte[] field, int offset, int length) {
        lengthPrefix(length);
        digest.update(field, offset, length);
        return this;
    }

    public String hex() {
        return hex(digest.digest());
    }

    public static String hex(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[bytes[i] & 0xf];
        }
        return new String(out);
    }

    private void lengthPrefix(int n) {
        digest.update((byte) (n >>> 24));
        digest.update((byte) (n >>> 16));
        digest.update((byte) (n >>> 8));
        digest.update((byte) n);
    }
}
