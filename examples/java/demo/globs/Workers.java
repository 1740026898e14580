package demo.globs;

import demo.util.Harness;

/**
 * usage: Workers N. Threads named worker-1, worker-2, worker-3 call task() 1000 N, 2000 N and
 * 3000 N times (one after the other, so each runs alone), then the main thread calls it 500 N
 * times. task() calls step() twice. DONE calls=<task calls> w1_tid= w2_tid= w3_tid= (Java thread ids).
 */
public final class Workers {
    static long sink;

    static int step(int x) {
        return x * 31 + 7;
    }

    static int task(int x) {
        return step(step(x));
    }

    public static void main(String[] args) throws Exception {
        final int n = Integer.parseInt(args[0]);
        Harness.awaitGo();
        long calls = 0;
        StringBuilder ids = new StringBuilder();
        for (int w = 1; w <= 3; w++) {
            final int count = 1000 * w * n;
            Thread t = new Thread(() -> {
                int x = 0;
                for (int i = 0; i < count; i++) {
                    x = task(x);
                }
                sink += x;
            }, "worker-" + w);
            t.start();
            t.join();
            calls += count;
            ids.append(" w").append(w).append("_tid=").append(t.getId());
        }
        int x = 0;
        for (int i = 0; i < 500 * n; i++) {
            x = task(x);
        }
        sink += x;
        calls += 500L * n;
        Harness.done("calls=" + calls + ids + " sink=" + sink);
    }
}
