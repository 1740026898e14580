package demo.abc;

import demo.util.Harness;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The DTrace example's call flow: a() calls b() twice and c() once, b() calls c() twice,
 * with consume(n) work between, n in units of UNIT_NS. Per call of a():
 * inclusive/exclusive a 135/45, b 40/20 (two calls), c 10/10 (five calls).
 * consume is written inline: a method call here would itself be traced.
 *
 * The JVM also times what it did, inline with System.nanoTime (a JDK method, not in
 * demo/abc), two ways per method: its body (first to last statement, inside the
 * tracer's frame) and its call sites (around the call, enclosing the tracer's frame).
 * So the tracer's inclusive time of a method lies between the two totals, however
 * loaded the machine. DONE (totals in ns over all calls):
 *   wall_ns: main thread around the run; loop_ns: around loop(), summed over threads;
 *   a_body_ns a_site_ns b_body_ns b_site_ns c_body_ns;
 *   c_site_a_ns / c_site_b_ns: c's call sites in a / in b;
 *   c_body_a_ns: the bodies of the c calls made by a (single-threaded runs only).
 * usage: Flow ITERATIONS UNIT_US [THREADS]
 */
public final class Flow {
    static long unitNs;
    static final AtomicLong aBody = new AtomicLong(), aSite = new AtomicLong();
    static final AtomicLong bBody = new AtomicLong(), bSite = new AtomicLong();
    static final AtomicLong cBody = new AtomicLong(), cSiteA = new AtomicLong(), cSiteB = new AtomicLong();
    static final AtomicLong cBodyA = new AtomicLong(), loopNs = new AtomicLong();
    static long cLast; // the last c body, read by a right after its call (one thread)

    static void a() {
        final long t0 = System.nanoTime();
        long s;
        long end = t0 + 15 * unitNs; while (System.nanoTime() < end) { }
        s = System.nanoTime(); b(); bSite.addAndGet(System.nanoTime() - s);
        end = System.nanoTime() + 20 * unitNs; while (System.nanoTime() < end) { }
        s = System.nanoTime(); c(); cSiteA.addAndGet(System.nanoTime() - s);
        cBodyA.addAndGet(cLast);
        end = System.nanoTime() + 5 * unitNs; while (System.nanoTime() < end) { }
        s = System.nanoTime(); b(); bSite.addAndGet(System.nanoTime() - s);
        end = System.nanoTime() + 5 * unitNs; while (System.nanoTime() < end) { }
        aBody.addAndGet(System.nanoTime() - t0);
    }

    static void b() {
        final long t0 = System.nanoTime();
        long s;
        long end = t0 + 5 * unitNs; while (System.nanoTime() < end) { }
        s = System.nanoTime(); c(); cSiteB.addAndGet(System.nanoTime() - s);
        end = System.nanoTime() + 5 * unitNs; while (System.nanoTime() < end) { }
        s = System.nanoTime(); c(); cSiteB.addAndGet(System.nanoTime() - s);
        end = System.nanoTime() + 10 * unitNs; while (System.nanoTime() < end) { }
        bBody.addAndGet(System.nanoTime() - t0);
    }

    static void c() {
        final long t0 = System.nanoTime();
        long end = t0 + 10 * unitNs; while (System.nanoTime() < end) { }
        final long d = System.nanoTime() - t0;
        cLast = d;
        cBody.addAndGet(d);
    }

    static void loop(int iterations) {
        for (int i = 0; i < iterations; i++) {
            long s = System.nanoTime();
            a();
            aSite.addAndGet(System.nanoTime() - s);
        }
    }

    public static void main(String[] args) throws Exception {
        int iterations = Integer.parseInt(args[0]);
        unitNs = Long.parseLong(args[1]) * 1000L;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        // Threads (and the lambda's invokedynamic bootstrap, ~100 ms on a cold JVM) are
        // created before READY; they are started after the go line.
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                long t0 = System.nanoTime();
                loop(iterations);
                loopNs.addAndGet(System.nanoTime() - t0);
            }, "flow-" + t);
        }
        Harness.awaitGo();
        long start = System.nanoTime();
        for (Thread w : workers) {
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        long wall = System.nanoTime() - start;
        Harness.done("wall_ns=" + wall + " loop_ns=" + loopNs.get()
                + " a_body_ns=" + aBody.get() + " a_site_ns=" + aSite.get()
                + " b_body_ns=" + bBody.get() + " b_site_ns=" + bSite.get()
                + " c_body_ns=" + cBody.get() + " c_site_a_ns=" + cSiteA.get()
                + " c_site_b_ns=" + cSiteB.get() + " c_body_a_ns=" + cBodyA.get());
    }
}
