package io.threadlab.targets.mvc.movies;

import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * The blocking client of delayCallDepth's self-calls: the JDK HttpClient over
 * HTTP/1.1 (a new connection per concurrent call, no pool cap), 60 s time-outs
 * as in seed 002. The port is only known once the server listens, so
 * {@link SelfUris} resolves the base URL on the first call.
 */
@Configuration(proxyBeanMethods = false)
class SelfClientConfig {

    @Bean
    RestClient selfClient(Environment env, @Value("${threadlab.self-timeout:60s}") Duration timeout) {
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .build();
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
        factory.setReadTimeout(timeout);
        return RestClient.builder().requestFactory(factory).uriBuilderFactory(new SelfUris(env)).build();
    }
}
