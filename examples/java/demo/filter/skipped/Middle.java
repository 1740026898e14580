package demo.filter.skipped;

import demo.filter.kept.Inner;

/**
 * Not kept: 800 us of its own, then Inner.leaf() twice. ns: its bodies' time, JVM-measured;
 * innerSiteNs: around its Inner.leaf() calls.
 */
public final class Middle {
    public static long ns, innerSiteNs;

    public static void work() {
        final long t0 = System.nanoTime();
        long end = t0 + 800_000; while (System.nanoTime() < end) { }
        long s = System.nanoTime();
        Inner.leaf();
        Inner.leaf();
        innerSiteNs += System.nanoTime() - s;
        ns += System.nanoTime() - t0;
    }
}
