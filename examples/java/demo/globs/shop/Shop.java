package demo.globs.shop;

/**
 * A call tree with exact counts for --class/--method tests (driven by demo.globs.GlobMain).
 * Work is arithmetic only (no calls inside the loops), in units of UNIT iterations:
 *   getA(): 1 unit, then setA() (2 units): inclusive 3 units, exclusive 1 when setA is traced
 *   getB(): 1 unit, then getA(): inclusive 4 units
 *   setA(): 2 units, no calls
 *   Inner.getC(): 1 unit; Inner.setC(): 1 unit, then Inner.getC()
 * Instances are built with new Shop() (Shop.&lt;init&gt;, which calls Object.&lt;init&gt;).
 */
public final class Shop {
    static final int UNIT = 20_000;
    static long sink;
    int a;

    public int getA() {
        long x = sink;
        for (int i = 0; i < UNIT; i++) { x = x * 6364136223846793005L + i; }
        sink = x;
        setA((int) x);
        return a;
    }

    public int getB() {
        long x = sink;
        for (int i = 0; i < UNIT; i++) { x = x * 6364136223846793005L + i; }
        sink = x;
        return getA() + 1;
    }

    public void setA(int v) {
        long x = sink;
        for (int i = 0; i < 2 * UNIT; i++) { x = x * 6364136223846793005L + i; }
        sink = x;
        a = v;
    }

    /** Nested: its JVM name is demo/globs/shop/Shop$Inner. */
    public static final class Inner {
        public static int getC() {
            long x = sink;
            for (int i = 0; i < UNIT; i++) { x = x * 6364136223846793005L + i; }
            sink = x;
            return (int) x;
        }

        public static void setC(int v) {
            long x = sink + v;
            for (int i = 0; i < UNIT; i++) { x = x * 6364136223846793005L + i; }
            sink = x + getC();
        }
    }
}
