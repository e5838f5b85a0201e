package io.threadlab.targets.webflux;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive endpoints. X-Thread is the thread that did the request's work:
 * the event loop for waits and naive CPU work (set by the filter), the
 * scheduler thread where the work was moved elsewhere.
 */
@RestController
class Endpoints {
    static final long MAX_DELAY_MS = 600_000;
    static final int MAX_ITERATIONS = 100_000_000;
    static final int MAX_ITEMS = 10_000;
    /** Distinct threads that ran /work's digests, sorted, comma-separated. */
    static final String WORK_THREADS_HEADER = "X-Work-Threads";

    private final int cores = Runtime.getRuntime().availableProcessors();
    private final Scheduler oversized;
    private final int oversizedRails;

    Endpoints(@Qualifier("oversizedScheduler") Scheduler oversized,
              @Value("${threadlab.oversized-factor:8}") int factor) {
        this.oversized = oversized;
        this.oversizedRails = cores * factor;
    }

    /** Seed 000: the non-blocking wait; no thread is held while the timer runs. */
    @GetMapping(value = "/io", produces = MediaType.TEXT_PLAIN_VALUE)
    Mono<String> io(@RequestParam(defaultValue = "300") long ms) {
        return Mono.delay(Duration.ofMillis(checkDelay("ms", ms))).map(tick -> "io:" + ms);
    }

    /**
     * Seed 003's mistake on purpose: Thread.sleep on the event loop. A plain
     * (non-Publisher) return type, so with spring.threads.virtual.enabled=true
     * Spring runs it on a virtual thread instead (WebFlux blocking execution):
     * X-Thread names the thread that slept.
     */
    @GetMapping(value = "/io-blocking", produces = MediaType.TEXT_PLAIN_VALUE)
    String ioBlocking(@RequestParam(defaultValue = "300") long ms, ServerHttpResponse response)
            throws InterruptedException {
        response.getHeaders().set(ThreadNames.HEADER, ThreadNames.current());
        Thread.sleep(checkDelay("ms", ms));
        return "io-blocking:" + ms;
    }

    /** Seed 000 naive: Mono.fromCallable without subscribeOn runs on the event loop that subscribed. */
    @GetMapping(value = "/cpu", produces = MediaType.TEXT_PLAIN_VALUE)
    Mono<ResponseEntity<String>> cpu(@RequestParam(defaultValue = "20000") int iterations) {
        int n = checkIterations(iterations);
        return Mono.fromCallable(() -> worked(CpuWork.chain(n)));
    }

    /** Seed 000 correct: the same work moved to Schedulers.parallel() (one thread per core). */
    @GetMapping(value = "/cpu-offloaded", produces = MediaType.TEXT_PLAIN_VALUE)
    Mono<ResponseEntity<String>> cpuOffloaded(@RequestParam(defaultValue = "20000") int iterations) {
        int n = checkIterations(iterations);
        return Mono.fromCallable(() -> worked(CpuWork.chain(n))).subscribeOn(Schedulers.parallel());
    }

    /**
     * Seed 004's four modes, exactly: serial (all items on the event loop),
     * subscribe (all items on one parallel thread), parallel (one rail per
     * core on Schedulers.parallel()), oversized (8 rails per core on a
     * scheduler of as many threads). The body is the sum of the item digests,
     * the same in every mode.
     */
    @GetMapping(value = "/work", produces = MediaType.TEXT_PLAIN_VALUE)
    Mono<ResponseEntity<String>> work(@RequestParam(defaultValue = "serial") String mode,
                                      @RequestParam(defaultValue = "8") int items,
                                      @RequestParam(defaultValue = "12000") int iterations) {
        int n = checkIterations(iterations);
        if (items < 1 || items > MAX_ITEMS) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "items must be between 1 and " + MAX_ITEMS + ", got " + items);
        }
        Set<String> threads = new ConcurrentSkipListSet<>();
        Flux<Integer> source = Flux.range(0, items);
        Flux<Long> result = switch (mode) {
            case "serial" -> source.map(i -> digest(i, n, threads));
            case "subscribe" -> source.map(i -> digest(i, n, threads)).subscribeOn(Schedulers.parallel());
            case "parallel" -> source.parallel(cores).runOn(Schedulers.parallel())
                    .map(i -> digest(i, n, threads)).sequential();
            case "oversized" -> source.parallel(oversizedRails).runOn(oversized)
                    .map(i -> digest(i, n, threads)).sequential();
            default -> throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "mode must be serial, subscribe, parallel or oversized, got " + mode);
        };
        return result.reduce(0L, Long::sum).map(sum -> ResponseEntity.ok()
                .header(ThreadNames.HEADER, ThreadNames.current())
                .header(WORK_THREADS_HEADER, String.join(",", new TreeSet<>(threads)))
                .body(Long.toString(sum)));
    }

    private static long digest(int item, int iterations, Set<String> threads) {
        threads.add(ThreadNames.current());
        return CpuWork.digest(item, iterations);
    }

    /** A response naming the thread it was built on: the one that just did the work. */
    private static ResponseEntity<String> worked(String body) {
        return ResponseEntity.ok().header(ThreadNames.HEADER, ThreadNames.current()).body(body);
    }

    static long checkDelay(String name, long ms) {
        if (ms < 0 || ms > MAX_DELAY_MS) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    name + " must be between 0 and " + MAX_DELAY_MS + ", got " + ms);
        }
        return ms;
    }

    static int checkIterations(int n) {
        if (n < 1 || n > MAX_ITERATIONS) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "iterations must be between 1 and " + MAX_ITERATIONS + ", got " + n);
        }
        return n;
    }
}
