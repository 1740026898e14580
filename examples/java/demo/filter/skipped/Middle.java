package demo.filter.skipped;

import demo.filter.kept.Inner;

/** Not kept: 800 us of its own, then Inner.leaf() twice. */
public final class Middle {
    public static void work() {
        long end = System.nanoTime() + 800_000; while (System.nanoTime() < end) { }
        Inner.leaf();
        Inner.leaf();
    }
}
