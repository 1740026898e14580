package demo.util;

import java.util.concurrent.ThreadFactory;

/**
 * One virtual thread that sleeps 1 ms inside synchronized and is joined: the first pinned park
 * of a JVM loads and links its path (parkOnCarrierThread, the pinned event's classes), which
 * can take longer than a short sleep, so that sleep ends before its carrier ever blocks. Run
 * before a workload's pinned blocks are counted; outside the workload's package, so a trace of
 * that package has no frame open on it.
 */
public final class PinnedWarmup {
    private PinnedWarmup() {}

    public static void run(ThreadFactory virtualThreads) throws InterruptedException {
        final Object lock = new Object();
        Thread t = virtualThreads.newThread(() -> {
            synchronized (lock) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        t.start();
        t.join();
    }
}
