package demo.filter.kept;

/** Kept. leaf(): 400 us. */
public final class Inner {
    public static void leaf() {
        long end = System.nanoTime() + 400_000; while (System.nanoTime() < end) { }
    }
}
