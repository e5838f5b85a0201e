package io.threadlab.targets.webflux.movies;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientException;

import reactor.core.publisher.Mono;

/**
 * Seed 002's endpoints, reactive (webflux-netty): the delay is Mono.delay, the
 * self-calls of delayCallDepth go through the non-blocking WebClient, and no
 * thread is held while either waits. X-Thread is the event loop that took the
 * request (set by the filter). Off when threadlab.webflux.blocking-handlers=true.
 */
@RestController
@ConditionalOnProperty(name = "threadlab.webflux.blocking-handlers", havingValue = "false", matchIfMissing = true)
class ReactiveMovieEndpoints {
    private final MovieService movies;
    private final WebClient self;

    ReactiveMovieEndpoints(MovieService movies, @Qualifier("selfWebClient") WebClient self) {
        this.movies = movies;
        this.self = self;
    }

    @GetMapping(value = "/epoch-millis", produces = MediaType.TEXT_PLAIN_VALUE)
    Mono<String> epochMillis(@RequestParam(defaultValue = "100") long delayInMillis,
                             @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth) {
        Delays.check(delayInMillis, delayCallDepth);
        return delay(delayInMillis, delayCallDepth)
                .then(Mono.fromSupplier(() -> Long.toString(System.currentTimeMillis())));
    }

    @GetMapping(value = "/movies", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<List<Movie>> findMovies(@RequestParam String directorLastName,
                                 @RequestParam(defaultValue = "100") long delayInMillis,
                                 @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth) {
        Delays.check(delayInMillis, delayCallDepth);
        // A cache hit on an in-memory list: cheap enough for the event loop.
        return delay(delayInMillis, delayCallDepth)
                .then(Mono.fromSupplier(() -> movies.findByDirectorLastName(directorLastName)));
    }

    @PostMapping(value = "/movies", consumes = MediaType.APPLICATION_JSON_VALUE,
            produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<List<Movie>> saveMovies(@RequestBody Mono<List<Movie>> body,
                                 @RequestParam(defaultValue = "100") long delayInMillis,
                                 @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth) {
        Delays.check(delayInMillis, delayCallDepth);
        return body.flatMap(list -> delay(delayInMillis, delayCallDepth).then(Mono.fromSupplier(() -> movies.saveAll(list))));
    }

    private Mono<Void> delay(long ms, int depth) {
        if (depth > 0) {
            return self.get().uri(Delays.SELF_CALL, ms, depth - 1).retrieve().bodyToMono(String.class).then();
        }
        return ms > 0 ? Mono.delay(Duration.ofMillis(ms)).then() : Mono.empty();
    }

    @ExceptionHandler(WebClientException.class)
    ResponseEntity<Map<String, String>> selfCallFailed(WebClientException e) {
        return ResponseEntity.status(HttpStatus.BAD_GATEWAY)
                .body(Map.of("error", "self-call for delayCallDepth failed: " + e.getMessage()));
    }
}
