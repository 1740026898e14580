package demo.globs.decoy;

/** Matches --class '*Inner' and --method 'get*', but not --package demo/globs/shop. */
public final class Inner {
    static long sink;

    public static int getC() {
        sink = sink * 31 + 7;
        return (int) sink;
    }
}
