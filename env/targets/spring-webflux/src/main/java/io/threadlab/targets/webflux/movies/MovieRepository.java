package io.threadlab.targets.webflux.movies;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.core.io.ClassPathResource;
import org.springframework.stereotype.Repository;

import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.ObjectMapper;

/**
 * The movies, in memory, loaded from the classpath's movies.json (shared by
 * both targets: env/targets/movies/src/movies.json). Seed 002 keeps them in
 * H2 behind Spring Data JPA and a Caffeine cache; with the cache in front,
 * every measured read is a cache hit, so the database is off the hot path and
 * an in-memory repository keeps Hibernate (and its start-up cost) out of the
 * JVM without changing what a request does.
 */
@Repository
public class MovieRepository {
    private final List<Movie> movies = new CopyOnWriteArrayList<>();
    private final AtomicLong nextId;

    public MovieRepository(ObjectMapper json) {
        try (InputStream in = new ClassPathResource("movies.json").getInputStream()) {
            movies.addAll(json.readValue(in, new TypeReference<List<Movie>>() { }));
        } catch (IOException e) {
            throw new UncheckedIOException("read movies.json from the classpath (built from env/targets/movies/src)", e);
        }
        nextId = new AtomicLong(movies.stream().mapToLong(Movie::id).max().orElse(0) + 1);
    }

    /** Every movie whose director has this last name, in id order. */
    public List<Movie> findByDirectorLastName(String lastName) {
        List<Movie> found = new ArrayList<>();
        for (Movie m : movies) {
            if (m.director() != null && lastName.equals(m.director().lastName())) {
                found.add(m);
            }
        }
        return found;
    }

    /** Stores copies of the movies under fresh ids and returns them. */
    public List<Movie> saveAll(List<Movie> toSave) {
        List<Movie> saved = new ArrayList<>(toSave.size());
        for (Movie m : toSave) {
            saved.add(new Movie(nextId.getAndIncrement(), m.title(), m.releaseDate(), m.director(), m.genres(),
                    m.runtimeMinutes(), m.cast()));
        }
        movies.addAll(saved);
        return saved;
    }
}
