package io.threadlab.targets.webflux.movies;

import java.util.List;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.stereotype.Service;

/**
 * Reads go through the "movies" cache (Caffeine), as in seed 002. Saves are
 * not stored unless threadlab.movies.read-only=false: the seed's default, since
 * the save path is the same code on every approach and storing would only
 * grow the list (and the get-movies body) during a run.
 */
@Service
public class MovieService {
    private final MovieRepository repo;
    private final boolean readOnly;

    public MovieService(MovieRepository repo, @Value("${threadlab.movies.read-only:true}") boolean readOnly) {
        this.repo = repo;
        this.readOnly = readOnly;
    }

    @Cacheable("movies")
    public List<Movie> findByDirectorLastName(String lastName) {
        return repo.findByDirectorLastName(lastName);
    }

    @CacheEvict(value = "movies", allEntries = true, condition = "!#root.target.readOnly()")
    public List<Movie> saveAll(List<Movie> movies) {
        return readOnly ? movies : repo.saveAll(movies);
    }

    public boolean readOnly() {
        return readOnly;
    }
}
