package io.threadlab.targets.mvc;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The gauge {@code threadlab.virtual.inflight} ({@code threadlab_virtual_inflight}
 * on /actuator/prometheus): requests being handled on virtual threads right
 * now. Micrometer has no live virtual-thread gauge ({@code jvm.threads.live}
 * counts platform threads only; micrometer-java21's {@code jvm.threads.virtual.live}
 * is the scheduler's view, mounted and queued virtual threads, without those
 * parked in a sleep or on I/O, where a thread-per-request server keeps most), and Tomcat with virtual threads runs each
 * request on a virtual thread of its own, so this is the number of virtual
 * threads serving requests; threadlab's telemetry sampler reads it once a
 * second (seed 002 reports platform and virtual thread counts). Counted in a
 * filter, which runs on the request's own thread; the actuator's requests,
 * the scrape among them, are left out. Always 0 on platform threads.
 */
@Component
class VirtualInflight extends OncePerRequestFilter implements MeterBinder {
    static final String GAUGE = "threadlab.virtual.inflight";

    private final AtomicInteger inflight = new AtomicInteger();

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(GAUGE, inflight, AtomicInteger::get)
                .description("Requests being handled on virtual threads now")
                .register(registry);
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return request.getRequestURI().startsWith("/actuator");
    }

    @Override
    protected void doFilterInternal(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws ServletException, IOException {
        if (!Thread.currentThread().isVirtual()) {
            chain.doFilter(req, res);
            return;
        }
        inflight.incrementAndGet();
        try {
            chain.doFilter(req, res);
        } finally {
            inflight.decrementAndGet();
        }
    }
}
