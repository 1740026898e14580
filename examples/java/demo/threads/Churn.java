package demo.threads;

import demo.util.Harness;

/**
 * usage: Churn SECONDS BATCH. Starts BATCH short-lived threads at a time, each calling work()
 * 10 times, until SECONDS have passed. DONE threads=<started> calls=<work calls>.
 */
public final class Churn {
    static int work(int x) {
        return x * 31 + 7;
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        int batch = Integer.parseInt(args[1]);
        Harness.awaitGo();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long started = 0;
        while (System.nanoTime() < end) {
            Thread[] ts = new Thread[batch];
            for (int i = 0; i < batch; i++) {
                ts[i] = new Thread(() -> {
                    int x = 0;
                    for (int k = 0; k < 10; k++) {
                        x = work(x);
                    }
                });
                ts[i].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            started += batch;
        }
        Harness.done("threads=" + started + " calls=" + started * 10);
    }
}
