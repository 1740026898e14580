package demo.stress;

import demo.util.Harness;

/**
 * Many more threads than CPUs, each calling tiny methods in a loop: the probe programs run on
 * every core at once and are switched out and in all the time, so a cache or scratch buffer torn
 * by a preempted program would show as a wrong count or a wrong name.
 * THREADS threads each make ITERATIONS rounds of tiny0() .. tiny3(); tiny3() calls tiny0().
 * Exact counts: tiny0 2 x THREADS x ITERATIONS, tiny1..tiny3 THREADS x ITERATIONS, work THREADS.
 * usage: ManyThreads THREADS ITERATIONS
 */
public final class ManyThreads {
    private ManyThreads() {}

    static long tiny0(long x) { return x * 31 + 1; }

    static long tiny1(long x) { return x ^ (x >>> 7); }

    static long tiny2(long x) { return x + 0x9E3779B97F4A7C15L; }

    static long tiny3(long x) { return tiny0(x) * 17; }

    static long work(int iterations) {
        long x = Thread.currentThread().getId();
        for (int i = 0; i < iterations; i++) {
            x = tiny3(tiny2(tiny1(tiny0(x))));
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int iterations = Integer.parseInt(args[1]);
        Harness.awaitGo();
        long[] sinks = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int slot = t;
            ts[t] = new Thread(() -> sinks[slot] = work(iterations), "stress-".concat(Integer.toString(t)));
        }
        for (Thread t : ts) {
            t.start();
        }
        long x = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            x ^= sinks[t];
        }
        Harness.done("threads=".concat(Integer.toString(threads)).concat(" x=").concat(Long.toString(x)));
    }
}
