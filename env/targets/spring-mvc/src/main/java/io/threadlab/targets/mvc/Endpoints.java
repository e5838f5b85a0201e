package io.threadlab.targets.mvc;

import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.server.ResponseStatusException;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectMapper;

/** The blocking endpoints; X-Thread is set by the filter in {@link MvcApplication}. */
@RestController
class Endpoints {
    static final long MAX_DELAY_MS = 600_000;
    static final int MAX_ITERATIONS = 100_000_000;

    private static final String ORDER_SQL = """
            SELECT o.id, o.customer_id, o.status, o.amount_cents, o.items, c.name, c.tier
            FROM orders o JOIN customers c ON c.id = o.customer_id
            WHERE o.id = ?""";

    private final JdbcTemplate jdbc;
    private final TransactionTemplate holding;
    private final RestClient downstream;
    private final ObjectMapper json;

    Endpoints(JdbcTemplate jdbc, TransactionTemplate holding, @Qualifier("downstreamClient") RestClient downstream,
              ObjectMapper json) {
        this.jdbc = jdbc;
        this.holding = holding;
        this.downstream = downstream;
        this.json = json;
    }

    /** Seed 000/003: a blocking wait standing for a slow call; holds a platform thread, parks a virtual one. */
    @GetMapping(value = "/io", produces = MediaType.TEXT_PLAIN_VALUE)
    String io(@RequestParam(defaultValue = "300") long ms) throws InterruptedException {
        Thread.sleep(checkDelay("ms", ms));
        return "io:" + ms;
    }

    /** Seed 000: CPU-bound chain of SHA-256; body is the hex of the last digest. */
    @GetMapping(value = "/cpu", produces = MediaType.TEXT_PLAIN_VALUE)
    String cpu(@RequestParam(defaultValue = "20000") int iterations) {
        return CpuWork.chain(checkIterations(iterations));
    }

    /**
     * Seed 001: a primary-key lookup joined to the customer through HikariCP,
     * then a blocking call to the downstream's /enrich/{customerId}. With
     * hold=true both run in one transaction, so the JDBC connection stays
     * checked out for the whole downstream delay (the pool becomes the ceiling);
     * with hold=false it is back in the pool before the call.
     */
    @GetMapping(value = "/order-summary/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    OrderSummary orderSummary(@PathVariable long id, @RequestParam(defaultValue = "false") boolean hold) {
        if (hold) {
            return holding.execute(status -> summarize(id, true));
        }
        return summarize(id, false);
    }

    private OrderSummary summarize(long id, boolean hold) {
        List<Order> rows = jdbc.query(ORDER_SQL, (rs, n) -> new Order(
                rs.getLong(1), rs.getLong(2), rs.getString(3), rs.getLong(4), rs.getInt(5),
                rs.getString(6), rs.getString(7)), id);
        if (rows.isEmpty()) {
            throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no order " + id);
        }
        Order o = rows.getFirst();
        ResponseEntity<String> res = downstream.get()
                .uri("/enrich/{customerId}", o.customerId())
                .retrieve()
                .toEntity(String.class);
        return new OrderSummary(o, hold, parse(res));
    }

    /** The downstream's body as JSON when it says it is JSON, else as a string. */
    private Object parse(ResponseEntity<String> res) {
        String body = res.getBody();
        MediaType type = res.getHeaders().getContentType();
        if (body == null || type == null || !type.getSubtype().contains("json")) {
            return body;
        }
        try {
            return json.readValue(body, Object.class);
        } catch (JacksonException e) {
            return body;
        }
    }

    @ExceptionHandler(RestClientException.class)
    ResponseEntity<Map<String, String>> downstreamFailed(RestClientException e) {
        return ResponseEntity.status(HttpStatus.BAD_GATEWAY)
                .body(Map.of("error", "downstream call failed: " + e.getMessage() + " (cause: "
                        + e.getMostSpecificCause() + "); is the downstream running at threadlab.downstream-url?"));
    }

    static long checkDelay(String name, long ms) {
        if (ms < 0 || ms > MAX_DELAY_MS) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    name + " must be between 0 and " + MAX_DELAY_MS + ", got " + ms);
        }
        return ms;
    }

    static int checkIterations(int n) {
        if (n < 1 || n > MAX_ITERATIONS) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "iterations must be between 1 and " + MAX_ITERATIONS + ", got " + n);
        }
        return n;
    }

    record Order(long id, long customerId, String status, long amountCents, int items,
                 String customerName, String customerTier) {
    }

    record OrderSummary(long orderId, long customerId, String customerName, String customerTier,
                        String status, long amountCents, int items, boolean held, Object enrichment) {
        OrderSummary(Order o, boolean held, Object enrichment) {
            this(o.id(), o.customerId(), o.customerName(), o.customerTier(), o.status(), o.amountCents(),
                    o.items(), held, enrichment);
        }
    }
}
