package demo.vt;

import demo.util.Harness;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * usage: FreshThreads THREADS AT_ONCE. JDK 21+.
 * THREADS virtual threads, each new, at most AT_ONCE alive, each runs once: call(), which
 * yields (the virtual thread unmounts with call() open and mounts again, maybe on another
 * carrier), then yields again outside call() (it unmounts with no traced frame open).
 * A server makes a fresh virtual thread per request or connection in the same way.
 * DONE calls=N (call()'s count as the JVM counted it).
 */
public final class FreshThreads {
    static final AtomicLong CALLS = new AtomicLong();

    static void call() {
        Thread.yield();
        CALLS.incrementAndGet();
    }

    static void run() {
        call();
        Thread.yield();
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int atOnce = Integer.parseInt(args[1]);
        ThreadFactory factory = VirtualTasks.virtualThreads();
        Semaphore alive = new Semaphore(atOnce);
        Harness.awaitGo();
        for (int i = 0; i < threads; i++) {
            alive.acquire();
            factory.newThread(() -> {
                try {
                    run();
                } finally {
                    alive.release();
                }
            }).start();
        }
        alive.acquire(atOnce);
        Harness.done("calls=".concat(Long.toString(CALLS.get())));
    }
}
