package io.threadlab.targets.webflux.movies;

import java.util.List;
import java.util.Map;

import io.threadlab.targets.webflux.ThreadNames;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * Seed 002's loom-netty: the same paths as {@link ReactiveMovieEndpoints}, but
 * plain blocking methods (Thread.sleep, a blocking RestClient for the
 * self-calls). They return no Publisher, so with spring.threads.virtual.enabled
 * Spring Boot hands WebFlux's blocking execution (WebFluxConfigurer
 * #configureBlockingExecution) the virtual-thread applicationTaskExecutor, and
 * Spring invokes each of them on a new virtual thread; Netty's event loops only
 * read and write. Without virtual threads they would block the event loop,
 * like /io-blocking. On with threadlab.webflux.blocking-handlers=true.
 * X-Thread is the thread that ran the method.
 */
@RestController
@ConditionalOnProperty(name = "threadlab.webflux.blocking-handlers", havingValue = "true")
class BlockingMovieEndpoints {
    private final MovieService movies;
    private final RestClient self;

    BlockingMovieEndpoints(MovieService movies, @Qualifier("selfRestClient") RestClient self) {
        this.movies = movies;
        this.self = self;
    }

    @GetMapping(value = "/epoch-millis", produces = MediaType.TEXT_PLAIN_VALUE)
    String epochMillis(@RequestParam(defaultValue = "100") long delayInMillis,
                       @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth,
                       ServerHttpResponse response) throws InterruptedException {
        delay(delayInMillis, delayCallDepth, response);
        return Long.toString(System.currentTimeMillis());
    }

    @GetMapping(value = "/movies", produces = MediaType.APPLICATION_JSON_VALUE)
    List<Movie> findMovies(@RequestParam String directorLastName,
                           @RequestParam(defaultValue = "100") long delayInMillis,
                           @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth,
                           ServerHttpResponse response) throws InterruptedException {
        delay(delayInMillis, delayCallDepth, response);
        return movies.findByDirectorLastName(directorLastName);
    }

    @PostMapping(value = "/movies", consumes = MediaType.APPLICATION_JSON_VALUE,
            produces = MediaType.APPLICATION_JSON_VALUE)
    List<Movie> saveMovies(@RequestBody List<Movie> body,
                           @RequestParam(defaultValue = "100") long delayInMillis,
                           @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth,
                           ServerHttpResponse response) throws InterruptedException {
        delay(delayInMillis, delayCallDepth, response);
        return movies.saveAll(body);
    }

    private void delay(long ms, int depth, ServerHttpResponse response) throws InterruptedException {
        response.getHeaders().set(ThreadNames.HEADER, ThreadNames.current());
        Delays.check(ms, depth);
        if (depth > 0) {
            self.get().uri(Delays.SELF_CALL, ms, depth - 1).retrieve().body(String.class);
        } else if (ms > 0) {
            Thread.sleep(ms);
        }
    }

    @ExceptionHandler(RestClientException.class)
    ResponseEntity<Map<String, String>> selfCallFailed(RestClientException e) {
        return ResponseEntity.status(HttpStatus.BAD_GATEWAY)
                .body(Map.of("error", "self-call for delayCallDepth failed: " + e.getMessage()));
    }
}
