package demo.filter.keptx;

/** Shares the prefix "demo/filter/kept" but not its segment: never kept by demo/filter/kept. */
public final class Decoy {
    public static int touch(int x) {
        return x * 3 + 1;
    }
}
