package io.threadlab.targets.mvc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Seed 000's CPU-bound unit: a chain of SHA-256 digests, no I/O, no allocation beyond the digests. */
final class CpuWork {
    static final byte[] SEED = "spring-boot-4.1-virtual-threads-benchmark".getBytes(StandardCharsets.UTF_8);

    private CpuWork() {
    }

    /** Returns the hex of the last digest so the work cannot be optimized away and clients can verify it. */
    static String chain(int iterations) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] data = SEED;
            for (int i = 0; i < iterations; i++) {
                data = md.digest(data);
            }
            return HexFormat.of().formatHex(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from this JDK", e);
        }
    }
}
