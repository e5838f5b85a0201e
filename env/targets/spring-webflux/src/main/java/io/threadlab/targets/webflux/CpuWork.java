package io.threadlab.targets.webflux;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The CPU-bound units: seed 000's SHA-256 chain and seed 004's per-item digest. */
final class CpuWork {
    static final byte[] SEED = "spring-boot-4.1-virtual-threads-benchmark".getBytes(StandardCharsets.UTF_8);

    private CpuWork() {
    }

    /** Seed 000: iterations chained SHA-256 digests of a fixed seed; hex of the last one (same as spring-mvc). */
    static String chain(int iterations) {
        MessageDigest md = sha256();
        byte[] data = SEED;
        for (int i = 0; i < iterations; i++) {
            data = md.digest(data);
        }
        return HexFormat.of().formatHex(data);
    }

    /** Seed 004: item seed and a constant as 16 bytes, digested iterations times; the first 8 bytes as a long. */
    static long digest(int seed, int iterations) {
        MessageDigest md = sha256();
        byte[] value = ByteBuffer.allocate(16).putLong(seed).putLong(0x5deece66dL).array();
        for (int i = 0; i < iterations; i++) {
            value = md.digest(value);
        }
        return ByteBuffer.wrap(value).getLong();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from this JDK", e);
        }
    }
}
