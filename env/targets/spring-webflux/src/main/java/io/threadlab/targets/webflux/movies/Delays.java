package io.threadlab.targets.webflux.movies;

import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/** Bounds of seed 002's delayInMillis and delayCallDepth, shared by both controllers. */
final class Delays {
    static final long MAX_DELAY_MS = 600_000;
    static final int MAX_CALL_DEPTH = 16;
    /** The self-call one level down; {ms} and {d} are delayInMillis and the remaining depth. */
    static final String SELF_CALL = "/epoch-millis?delayInMillis={ms}&delayCallDepth={d}";

    private Delays() {
    }

    static void check(long ms, int depth) {
        if (ms < 0 || ms > MAX_DELAY_MS) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "delayInMillis must be between 0 and " + MAX_DELAY_MS + ", got " + ms);
        }
        if (depth < 0 || depth > MAX_CALL_DEPTH) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "delayCallDepth must be between 0 and " + MAX_CALL_DEPTH + ", got " + depth);
        }
    }
}
