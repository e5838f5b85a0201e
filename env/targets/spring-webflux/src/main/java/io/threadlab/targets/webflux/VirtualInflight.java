package io.threadlab.targets.webflux;

import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.core.task.TaskDecorator;
import org.springframework.stereotype.Component;

/**
 * The gauge {@code threadlab.virtual.inflight} ({@code threadlab_virtual_inflight}
 * on /actuator/prometheus): tasks running on virtual threads right now.
 * Micrometer has no live virtual-thread gauge ({@code jvm.threads.live}
 * counts platform threads only; micrometer-java21's {@code jvm.threads.virtual.live}
 * is the scheduler's view, mounted and queued virtual threads, without those
 * parked in a sleep or on I/O, where a thread-per-request server keeps most). On this target virtual threads run
 * WebFlux's blocking handlers (loom-netty, /io-blocking): with
 * spring.threads.virtual.enabled Spring Boot hands the applicationTaskExecutor,
 * which starts a virtual thread per task and applies this bean as its
 * TaskDecorator, to WebFlux's blocking execution. So the gauge is the number
 * of virtual threads handling requests; it stays 0 for the reactive handlers
 * (webflux-netty), which run on the event loops. threadlab's telemetry
 * sampler reads it once a second (seed 002 reports platform and virtual
 * thread counts).
 */
@Component
class VirtualInflight implements MeterBinder, TaskDecorator {
    static final String GAUGE = "threadlab.virtual.inflight";

    private final AtomicInteger inflight = new AtomicInteger();

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(GAUGE, inflight, AtomicInteger::get)
                .description("Tasks (blocking request handlers) running on virtual threads now")
                .register(registry);
    }

    @Override
    public Runnable decorate(Runnable task) {
        return () -> {
            if (!Thread.currentThread().isVirtual()) {
                task.run();
                return;
            }
            inflight.incrementAndGet();
            try {
                task.run();
            } finally {
                inflight.decrementAndGet();
            }
        };
    }
}
