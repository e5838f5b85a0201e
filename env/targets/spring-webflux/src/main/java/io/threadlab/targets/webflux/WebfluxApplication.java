package io.threadlab.targets.webflux;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.web.server.WebFilter;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive target: Netty event loops (reactor-http-nio-N) and Reactor
 * schedulers, with the naive and the correct way of doing CPU work side by side.
 */
@SpringBootApplication
@EnableCaching
public class WebfluxApplication {

    public static void main(String[] args) {
        SpringApplication.run(WebfluxApplication.class, args);
    }

    /**
     * Seed 004's deliberately oversized scheduler: factor x cores workers
     * (factor 8: 32 on the seed's 4 cores, 16 on a 2-core box), disposed on shutdown.
     */
    @Bean(destroyMethod = "dispose")
    Scheduler oversizedScheduler(@Value("${threadlab.oversized-factor:8}") int factor) {
        return Schedulers.newParallel("oversized", Runtime.getRuntime().availableProcessors() * factor);
    }

    /**
     * Names the thread that received the request (an event-loop thread) on
     * every response; handlers whose work runs elsewhere overwrite it with
     * the thread that did the work.
     */
    @Bean
    WebFilter threadHeaderFilter() {
        return (exchange, chain) -> {
            exchange.getResponse().getHeaders().set(ThreadNames.HEADER, ThreadNames.current());
            return chain.filter(exchange);
        };
    }
}
