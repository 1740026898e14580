package demo.latency;

import demo.util.Harness;

/**
 * Calls of a known skewed distribution, timed by the JVM itself: CALLS calls of call(), each
 * sleeping (Thread.sleep: off a CPU, few probe events inside) for a time drawn from SEED: 80% about
 * 1 ms, 15% 2 to 4 ms, 4% 10 to 20 ms, 1% 30 to 60 ms. Nothing runs between 4.5 ms and 9.5 ms, so
 * the calls over a threshold there are counted alike by any clock.
 *
 * The JVM times every call around its call site (System.nanoTime, which holds the call's own entry
 * and return probes) and prints DONE calls=.. p50_ns=.. p90_ns=.. p99_ns=.. min_ns=.. max_ns=..
 * over_7ms=.. near_7ms=.. (nearest-rank percentiles of its own timings; calls of 7 ms and more,
 * and within 5% of 7 ms, where the JVM's clock and the probes' may differ). With FILE,
 * its sorted timings go there too, one ns value a line, so that a test can take the percentiles of
 * several runs together. SCALE (1 when left out) multiplies every sleep. With VTHREADS (JDK 21+),
 * the calls run on that many virtual threads, each taking the next call of the plan: every sleep
 * unmounts its virtual thread, which another carrier may mount again.
 * usage: Skewed CALLS SEED [SCALE [FILE|- [VTHREADS]]]
 */
public final class Skewed {
    static void call(long sleepUs) throws InterruptedException {
        Thread.sleep(sleepUs / 1000, (int) (sleepUs % 1000) * 1000);
    }

    static long sleepUs(java.util.Random random) {
        int bucket = random.nextInt(100);
        if (bucket < 80) {
            return 1000;
        }
        if (bucket < 95) {
            return 2000 + random.nextInt(2000);
        }
        if (bucket < 99) {
            return 10000 + random.nextInt(10000);
        }
        return 30000 + random.nextInt(30000);
    }

    /** The plan's calls on n virtual threads (Thread.ofVirtual() through reflection: compiled for JDK 17). */
    static void onVirtualThreads(long[] plan, long[] took, int n) throws Exception {
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        java.lang.reflect.Method start = Class.forName("java.lang.Thread$Builder")
                .getMethod("start", Runnable.class);
        Thread[] threads = new Thread[n];
        for (int v = 0; v < n; v++) {
            threads[v] = (Thread) start.invoke(builder, (Runnable) () -> {
                for (int i; (i = next.getAndIncrement()) < plan.length;) {
                    long t0 = System.nanoTime();
                    try {
                        call(plan[i]);
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                    took[i] = System.nanoTime() - t0;
                }
            });
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    static long rank(long[] sorted, double q) {
        int r = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(1, Math.min(sorted.length, r)) - 1];
    }

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(args[0]);
        java.util.Random random = new java.util.Random(Long.parseLong(args[1]));
        long scale = args.length > 2 ? Long.parseLong(args[2]) : 1;
        long[] plan = new long[calls];
        for (int i = 0; i < calls; i++) {
            plan[i] = scale * sleepUs(random);
        }
        long[] took = new long[calls];
        int vthreads = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        Harness.awaitGo();
        if (vthreads > 0) {
            onVirtualThreads(plan, took, vthreads);
        } else {
            for (int i = 0; i < calls; i++) {
                long t0 = System.nanoTime();
                call(plan[i]);
                took[i] = System.nanoTime() - t0;
            }
        }
        java.util.Arrays.sort(took);
        long over = 0, near = 0;
        for (long t : took) {
            if (t >= 7_000_000) {
                over++;
            }
            if (t >= 6_650_000 && t < 7_350_000) {
                near++;
            }
        }
        // StringBuilder, not "+": see Harness.done.
        Harness.done(new StringBuilder().append("calls=").append(calls)
                .append(" p50_ns=").append(rank(took, 0.50)).append(" p90_ns=").append(rank(took, 0.90))
                .append(" p99_ns=").append(rank(took, 0.99)).append(" min_ns=").append(took[0])
                .append(" max_ns=").append(took[calls - 1]).append(" over_7ms=").append(over).append(" near_7ms=").append(near).toString());
        if (args.length > 3 && !args[3].equals("-")) {
            StringBuilder all = new StringBuilder();
            for (long t : took) {
                all.append(t).append('\n');
            }
            java.nio.file.Files.write(java.nio.file.Paths.get(args[3]), all.toString().getBytes());
        }
    }
}
