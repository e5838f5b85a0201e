package io.threadlab.targets.mvc.movies;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.util.DefaultUriBuilderFactory;

/**
 * The blocking client of delayCallDepth's self-calls: the JDK HttpClient over
 * HTTP/1.1 (a new connection per concurrent call, no pool cap), 60 s time-outs
 * as in seed 002. The port is only known once the server listens, so the base
 * URL is resolved on the first call.
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
        return RestClient.builder()
                .requestFactory(factory)
                .uriBuilderFactory(new SelfUriBuilderFactory(env))
                .build();
    }

    /** Expands templates against http://{server.address or 127.0.0.1}:{local.server.port}. */
    static final class SelfUriBuilderFactory extends DefaultUriBuilderFactory {
        private final Environment env;
        private volatile DefaultUriBuilderFactory delegate;

        SelfUriBuilderFactory(Environment env) {
            this.env = env;
        }

        private DefaultUriBuilderFactory delegate() {
            DefaultUriBuilderFactory d = delegate;
            if (d == null) {
                String port = env.getProperty("local.server.port");
                if (port == null) {
                    throw new IllegalStateException("self-call before the server listens: local.server.port is not set");
                }
                String host = env.getProperty("server.address", "127.0.0.1");
                if (host.isEmpty() || host.equals("0.0.0.0")) {
                    host = "127.0.0.1";
                }
                d = new DefaultUriBuilderFactory("http://" + host + ":" + port);
                delegate = d;
            }
            return d;
        }

        @Override
        public URI expand(String template, Object... vars) {
            return delegate().expand(template, vars);
        }

        @Override
        public URI expand(String template, java.util.Map<String, ?> vars) {
            return delegate().expand(template, vars);
        }

        @Override
        public org.springframework.web.util.UriBuilder uriString(String template) {
            return delegate().uriString(template);
        }

        @Override
        public org.springframework.web.util.UriBuilder builder() {
            return delegate().builder();
        }
    }
}
