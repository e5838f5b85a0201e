package io.threadlab.targets.mvc;

import java.io.IOException;
import java.net.http.HttpClient;
import java.time.Duration;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.client.RestClient;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The blocking target: Tomcat with platform threads (default) or virtual
 * threads ({@code spring.threads.virtual.enabled=true}), JDBC through HikariCP
 * and a blocking downstream call through {@link RestClient}.
 */
@SpringBootApplication
@EnableCaching
public class MvcApplication {

    public static void main(String[] args) {
        SpringApplication.run(MvcApplication.class, args);
    }

    /**
     * Boot 4 no longer hands out the RestClient.Builder we want by default
     * (seed 001's warning), so the client is wired explicitly: the JDK
     * HttpClient, HTTP/1.1 (no h2c upgrade dance with the Go downstream).
     */
    @Bean
    RestClient downstreamClient(
            @Value("${threadlab.downstream-url}") String baseUrl,
            @Value("${threadlab.downstream-connect-timeout:5s}") Duration connectTimeout,
            @Value("${threadlab.downstream-read-timeout:30s}") Duration readTimeout) {
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout)
                .build();
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
        factory.setReadTimeout(readTimeout);
        return RestClient.builder().baseUrl(baseUrl).requestFactory(factory).build();
    }

    /** Used by hold=true: one transaction, hence one checked-out connection, across the downstream call. */
    @Bean
    TransactionTemplate holdingTransaction(PlatformTransactionManager tm) {
        return new TransactionTemplate(tm);
    }

    /**
     * Servlet code runs the filter and the handler on the same thread, so the
     * header set here names the thread that handles the request.
     */
    @Bean
    OncePerRequestFilter threadHeaderFilter() {
        return new OncePerRequestFilter() {
            @Override
            protected void doFilterInternal(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
                    throws ServletException, IOException {
                res.setHeader(ThreadNames.HEADER, ThreadNames.current());
                chain.doFilter(req, res);
            }
        };
    }
}
