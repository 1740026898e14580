package demo.abc;

import demo.util.Harness;

/**
 * The seed's call flow: a() calls b() twice and c() once, b() calls c() twice,
 * with consume(n) work between, n in units of UNIT_NS. Per call of a():
 * inclusive/exclusive a 135/45, b 40/20 (two calls), c 10/10 (five calls).
 * consume is written inline: a method call here would itself be traced.
 * usage: Flow ITERATIONS UNIT_US [THREADS]
 */
public final class Flow {
    static long unitNs;

    static void a() {
        long end = System.nanoTime() + 15 * unitNs; while (System.nanoTime() < end) { }
        b();
        end = System.nanoTime() + 20 * unitNs; while (System.nanoTime() < end) { }
        c();
        end = System.nanoTime() + 5 * unitNs; while (System.nanoTime() < end) { }
        b();
        end = System.nanoTime() + 5 * unitNs; while (System.nanoTime() < end) { }
    }

    static void b() {
        long end = System.nanoTime() + 5 * unitNs; while (System.nanoTime() < end) { }
        c();
        end = System.nanoTime() + 5 * unitNs; while (System.nanoTime() < end) { }
        c();
        end = System.nanoTime() + 10 * unitNs; while (System.nanoTime() < end) { }
    }

    static void c() {
        long end = System.nanoTime() + 10 * unitNs; while (System.nanoTime() < end) { }
    }

    static void loop(int iterations) {
        for (int i = 0; i < iterations; i++) {
            a();
        }
    }

    public static void main(String[] args) throws Exception {
        int iterations = Integer.parseInt(args[0]);
        unitNs = Long.parseLong(args[1]) * 1000L;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        Harness.awaitGo();
        long start = System.nanoTime();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> loop(iterations), "flow-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        Harness.done("wall_ns=" + (System.nanoTime() - start));
    }
}
