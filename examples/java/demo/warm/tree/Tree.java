package demo.warm.tree;

/**
 * The DTrace example's call flow: a() calls b() twice and c() once, b() calls c() twice.
 * Per a(): 1 a, 2 b, 5 c. Work per call in loop iterations, times unit: a 20, b
 * 10, c 5 (exclusive); with unit 1 the JIT compiles and inlines it all.
 */
public final class Tree {
    private Tree() {}

    static long sink;
    /** Work multiplier (Rounds' UNIT). */
    public static int unit = 1;

    public static void a() {
        long x = sink;
        for (int i = 0; i < 20 * unit; i++) { x = x * 31 + i; }
        sink = x;
        b();
        c();
        b();
    }

    static void b() {
        long x = sink;
        for (int i = 0; i < 10 * unit; i++) { x = x * 31 + i; }
        sink = x;
        c();
        c();
    }

    static void c() {
        long x = sink;
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        sink = x;
    }
}
