package io.threadlab.targets.mvc.movies;

import java.util.List;

/**
 * Seed 002's movie: the get-movies body is a list of these as JSON. The same
 * record (same components, same order) lives in the webflux target, so the
 * four approaches answer byte-identical JSON.
 */
public record Movie(long id, String title, String releaseDate, Person director, List<String> genres,
                    int runtimeMinutes, List<Person> cast) {

    /** A director or a cast member. */
    public record Person(String firstName, String lastName) {
    }
}
