package demo.filter.kept;

import demo.filter.skipped.Middle;

/**
 * Kept by --package demo/filter/kept. run(): 400 us, Middle.work() (untraced), 200 us.
 * ns: the time of run()'s bodies as the JVM measures it (single-threaded workload);
 * middleSiteNs: around its Middle.work() calls.
 */
public final class Outer {
    public static long ns, middleSiteNs;

    public static void run() {
        final long t0 = System.nanoTime();
        long end = t0 + 400_000; while (System.nanoTime() < end) { }
        long s = System.nanoTime();
        Middle.work();
        middleSiteNs += System.nanoTime() - s;
        end = System.nanoTime() + 200_000; while (System.nanoTime() < end) { }
        ns += System.nanoTime() - t0;
    }
}
