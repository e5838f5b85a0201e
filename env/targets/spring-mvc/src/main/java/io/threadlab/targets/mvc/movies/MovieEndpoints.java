package io.threadlab.targets.mvc.movies;

import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.server.ResponseStatusException;

/**
 * Seed 002's endpoints, blocking (platform-tomcat and loom-tomcat). Each first
 * delays: with delayCallDepth d > 0 it calls this service's own /epoch-millis
 * with depth d-1 over HTTP (a blocking RestClient), so the request that finally
 * sleeps delayInMillis is d calls deep; with d = 0 it sleeps delayInMillis
 * itself. Then it answers.
 */
@RestController
class MovieEndpoints {
    static final long MAX_DELAY_MS = 600_000;
    static final int MAX_CALL_DEPTH = 16;

    private final MovieService movies;
    private final RestClient self;

    MovieEndpoints(MovieService movies, @Qualifier("selfClient") RestClient self) {
        this.movies = movies;
        this.self = self;
    }

    /** get-time: the current epoch millis after the delay. */
    @GetMapping(value = "/epoch-millis", produces = MediaType.TEXT_PLAIN_VALUE)
    String epochMillis(@RequestParam(defaultValue = "100") long delayInMillis,
                       @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth) throws InterruptedException {
        delay(delayInMillis, delayCallDepth);
        return Long.toString(System.currentTimeMillis());
    }

    /** get-movies: the director's movies (through the cache) after the delay. */
    @GetMapping(value = "/movies", produces = MediaType.APPLICATION_JSON_VALUE)
    List<Movie> findMovies(@RequestParam String directorLastName,
                           @RequestParam(defaultValue = "100") long delayInMillis,
                           @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth) throws InterruptedException {
        delay(delayInMillis, delayCallDepth);
        return movies.findByDirectorLastName(directorLastName);
    }

    /** get-post's save: a JSON array of movies; answers what was saved. */
    @PostMapping(value = "/movies", consumes = MediaType.APPLICATION_JSON_VALUE,
            produces = MediaType.APPLICATION_JSON_VALUE)
    List<Movie> saveMovies(@RequestBody List<Movie> body,
                           @RequestParam(defaultValue = "100") long delayInMillis,
                           @RequestParam(defaultValue = "${threadlab.default-call-depth:0}") int delayCallDepth) throws InterruptedException {
        delay(delayInMillis, delayCallDepth);
        return movies.saveAll(body);
    }

    private void delay(long ms, int depth) throws InterruptedException {
        if (ms < 0 || ms > MAX_DELAY_MS) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "delayInMillis must be between 0 and " + MAX_DELAY_MS + ", got " + ms);
        }
        if (depth < 0 || depth > MAX_CALL_DEPTH) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "delayCallDepth must be between 0 and " + MAX_CALL_DEPTH + ", got " + depth);
        }
        if (depth > 0) {
            self.get()
                    .uri("/epoch-millis?delayInMillis={ms}&delayCallDepth={d}", ms, depth - 1)
                    .retrieve()
                    .body(String.class);
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
