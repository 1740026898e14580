package demo.filter.kept;

/** Kept. leaf(): 400 us. ns: the time of leaf()'s bodies as the JVM measures it. */
public final class Inner {
    public static long ns;

    public static void leaf() {
        final long t0 = System.nanoTime();
        long end = t0 + 400_000; while (System.nanoTime() < end) { }
        ns += System.nanoTime() - t0;
    }
}
