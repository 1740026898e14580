package demo.filter.kept;

import demo.filter.skipped.Middle;

/** Kept by --package demo/filter/kept. run(): 400 us, Middle.work() (untraced), 200 us. */
public final class Outer {
    public static void run() {
        long end = System.nanoTime() + 400_000; while (System.nanoTime() < end) { }
        Middle.work();
        end = System.nanoTime() + 200_000; while (System.nanoTime() < end) { }
    }
}
