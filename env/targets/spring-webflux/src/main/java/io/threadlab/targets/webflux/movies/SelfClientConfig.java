package io.threadlab.targets.webflux.movies;

import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import reactor.netty.resources.ConnectionProvider;

/**
 * The two clients of delayCallDepth's self-calls, 60 s time-outs as in seed 002:
 * webflux-netty's non-blocking WebClient on Reactor Netty, and loom-netty's
 * blocking RestClient on the JDK HttpClient (HTTP/1.1).
 */
@Configuration(proxyBeanMethods = false)
class SelfClientConfig {

    /**
     * Reactor Netty's default pool holds 500 connections and queues at most
     * 1000 acquires, then fails the call: thousands of users at call depth 1
     * would fail in the client, not in the server under test. The pool here
     * is as large as the load needs (threadlab.self-max-connections) and
     * queues without bound, like the JDK client on the blocking side.
     */
    @Bean(destroyMethod = "dispose")
    ConnectionProvider selfConnections(@Value("${threadlab.self-max-connections:100000}") int maxConnections,
                                       @Value("${threadlab.self-timeout:60s}") Duration timeout) {
        return ConnectionProvider.builder("self")
                .maxConnections(maxConnections)
                .pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(timeout)
                .build();
    }

    @Bean
    WebClient selfWebClient(Environment env, ConnectionProvider selfConnections,
                            @Value("${threadlab.self-timeout:60s}") Duration timeout) {
        reactor.netty.http.client.HttpClient http = reactor.netty.http.client.HttpClient.create(selfConnections)
                .responseTimeout(timeout);
        return WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(http))
                .uriBuilderFactory(new SelfUris(env))
                .build();
    }

    @Bean
    RestClient selfRestClient(Environment env, @Value("${threadlab.self-timeout:60s}") Duration timeout) {
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .build();
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
        factory.setReadTimeout(timeout);
        return RestClient.builder().requestFactory(factory).uriBuilderFactory(new SelfUris(env)).build();
    }
}
