package io.threadlab.targets.mvc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import jdk.jfr.consumer.RecordingStream;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Seed 000's JEP 491 passage and seed 001's pinning check: a handler that
 * blocks while it holds a monitor ({@code GET /pin/sync}), and the control
 * that blocks the same way under a {@link ReentrantLock} ({@code GET /pin/lock}).
 * On JDK 21 a virtual thread that blocks inside {@code synchronized} cannot
 * unmount, so it holds its carrier for the whole wait (pinning); a lock
 * parks it like any other wait. Since JDK 24 (JEP 491) a monitor no longer
 * pins either.
 *
 * <p>What makes pinning visible in wall time is carriers, not the monitor:
 * each request takes a monitor of its own (one of {@value #STRIPES}, round
 * robin, so no two requests of a burst share one), then blocks. Where
 * nothing pins, every request waits at once and a burst takes one wait;
 * where each wait pins its carrier, the burst goes through the carriers in
 * rounds, burst / carriers of them
 * ({@code -Djdk.virtualThreadScheduler.parallelism} sets the carriers). One
 * shared monitor ({@code shared=true}) would serialize the requests on both
 * JDKs and hide the difference; it is there to show that. The monitors are
 * fields of an array, not {@code new Object()}: a lock on an object that
 * never escapes may be elided by the JIT, and then nothing would pin.
 *
 * <p>The wait is {@code Thread.sleep} ({@code call=sleep}, seed 000's
 * "synchronized-then-sleep") or a blocking socket read from the downstream
 * ({@code call=downstream}: a plain {@link Socket} GET of /enrich/1 at
 * {@code threadlab.downstream-url}, read to its end; as long as the
 * downstream's delay).
 *
 * <p>With {@code threadlab.pinned-events.enabled=true} the JVM's own
 * {@code jdk.VirtualThreadPinned} JFR events (JFR's default 20 ms threshold,
 * what a recording with default settings counts) are counted by an in-process
 * {@link RecordingStream} and exported as the counter
 * {@code threadlab.virtual.pinned} ({@code threadlab_virtual_pinned_total}
 * on /actuator/prometheus), which threadlab's telemetry scrapes once a
 * second like the GC counters; off by default, so other experiments run
 * without a JFR recording. JFR delivers events to a stream in flushes about
 * once a second, so a pinned wait that ends in a trial's last second may be
 * counted in the next scrape.
 */
@RestController
class PinningEndpoints implements MeterBinder, DisposableBean {
    static final String COUNTER = "threadlab.virtual.pinned";
    static final String EVENT = "jdk.VirtualThreadPinned";
    static final int STRIPES = 4096;

    private final Object[] monitors = new Object[STRIPES];
    private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
    private final Object sharedMonitor = new Object();
    private final ReentrantLock sharedLock = new ReentrantLock();
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong pinned = new AtomicLong();
    private final URI downstream;
    private final RecordingStream stream;

    PinningEndpoints(@Value("${threadlab.downstream-url}") String downstreamUrl,
                     @Value("${threadlab.pinned-events.enabled:false}") boolean countPinned) {
        for (int i = 0; i < STRIPES; i++) {
            monitors[i] = new Object();
            locks[i] = new ReentrantLock();
        }
        this.downstream = URI.create(downstreamUrl);
        this.stream = countPinned ? startCounting() : null;
    }

    private RecordingStream startCounting() {
        RecordingStream rs = new RecordingStream();
        rs.enable(EVENT).withThreshold(Duration.ofMillis(20)).withoutStackTrace();
        rs.onEvent(EVENT, e -> pinned.incrementAndGet());
        rs.startAsync();
        return rs;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (stream == null) {
            return;
        }
        FunctionCounter.builder(COUNTER, pinned, AtomicLong::get)
                .description("jdk.VirtualThreadPinned JFR events since start (threshold 20 ms)")
                .register(registry);
    }

    @Override
    public void destroy() {
        if (stream != null) {
            stream.close();
        }
    }

    /** Blocks while holding a monitor: pins a virtual thread's carrier on JDK 21, not since JDK 24. */
    @GetMapping(value = "/pin/sync", produces = MediaType.TEXT_PLAIN_VALUE)
    String sync(@RequestParam(defaultValue = "300") long ms,
                @RequestParam(defaultValue = "sleep") String call,
                @RequestParam(defaultValue = "false") boolean shared) throws IOException, InterruptedException {
        checkCall(call);
        Endpoints.checkDelay("ms", ms);
        Object monitor = shared ? sharedMonitor : monitors[stripe()];
        synchronized (monitor) {
            block(call, ms);
        }
        return "sync:" + what(call, ms);
    }

    /** The control: the same wait under a ReentrantLock, which parks (unmounts) a virtual thread on any JDK. */
    @GetMapping(value = "/pin/lock", produces = MediaType.TEXT_PLAIN_VALUE)
    String lock(@RequestParam(defaultValue = "300") long ms,
                @RequestParam(defaultValue = "sleep") String call,
                @RequestParam(defaultValue = "false") boolean shared) throws IOException, InterruptedException {
        checkCall(call);
        Endpoints.checkDelay("ms", ms);
        ReentrantLock lock = shared ? sharedLock : locks[stripe()];
        lock.lock();
        try {
            block(call, ms);
        } finally {
            lock.unlock();
        }
        return "lock:" + what(call, ms);
    }

    /** The body names the wait: "sleep:300", or "downstream" (as long as the downstream's delay). */
    private static String what(String call, long ms) {
        return call.equals("sleep") ? "sleep:" + ms : call;
    }

    private int stripe() {
        return (int) (next.getAndIncrement() % STRIPES);
    }

    private static void checkCall(String call) {
        if (!call.equals("sleep") && !call.equals("downstream")) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "call must be sleep or downstream, got " + call);
        }
    }

    private void block(String call, long ms) throws IOException, InterruptedException {
        if (call.equals("sleep")) {
            Thread.sleep(ms);
            return;
        }
        readDownstream();
    }

    /**
     * GET /enrich/1 over a plain socket with Connection: close, read to the
     * end: a blocking socket read for as long as the downstream waits.
     */
    private void readDownstream() throws IOException {
        int port = downstream.getPort() < 0 ? 80 : downstream.getPort();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(downstream.getHost(), port), 5_000);
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /enrich/1 HTTP/1.1\r\nHost: " + downstream.getHost() + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] head = new byte[12];
            int n = in.readNBytes(head, 0, head.length);
            String status = new String(head, 0, n, StandardCharsets.US_ASCII);
            in.transferTo(OutputStream.nullOutputStream());
            if (!status.startsWith("HTTP/1.1 200")) {
                throw new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                        "downstream " + downstream + " answered \"" + status.trim()
                                + "\"; is the downstream running at threadlab.downstream-url?");
            }
        }
    }
}
