package io.threadlab.targets.mvc.movies;

import java.net.URI;
import java.util.Map;

import org.springframework.core.env.Environment;
import org.springframework.web.util.DefaultUriBuilderFactory;
import org.springframework.web.util.UriBuilder;

/**
 * Expands the self-call templates against
 * http://{server.address or 127.0.0.1}:{local.server.port}. The port is only
 * known once the server listens, so it is looked up on the first call.
 */
final class SelfUris extends DefaultUriBuilderFactory {
    private final Environment env;
    private volatile DefaultUriBuilderFactory delegate;

    SelfUris(Environment env) {
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
    public URI expand(String template, Map<String, ?> vars) {
        return delegate().expand(template, vars);
    }

    @Override
    public UriBuilder uriString(String template) {
        return delegate().uriString(template);
    }

    @Override
    public UriBuilder builder() {
        return delegate().builder();
    }
}
