package io.threadlab.targets.webflux;

/** Names the current thread for the X-Thread header. */
public final class ThreadNames {
    public static final String HEADER = "X-Thread";

    private ThreadNames() {
    }

    /**
     * Platform threads keep their name (Netty: {@code reactor-http-nio-3}, Reactor: {@code parallel-1}).
     * Virtual threads are often unnamed, so they become {@code virtual-<id>}:
     * distinct per thread and recognizably virtual.
     */
    public static String current() {
        Thread t = Thread.currentThread();
        if (t.isVirtual()) {
            return "virtual-" + t.threadId();
        }
        return t.getName();
    }
}
