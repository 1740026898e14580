package demo.warm.tree;

/**
 * The seed's call flow with little work per call, so that the JIT compiles and
 * inlines it: a() calls b() twice and c() once, b() calls c() twice. Per a():
 * 1 a, 2 b, 5 c.
 */
public final class Tree {
    private Tree() {}

    static long sink;

    public static void a() {
        long x = sink;
        for (int i = 0; i < 20; i++) { x = x * 31 + i; }
        sink = x;
        b();
        c();
        b();
    }

    static void b() {
        long x = sink;
        for (int i = 0; i < 10; i++) { x = x * 31 + i; }
        sink = x;
        c();
        c();
    }

    static void c() {
        long x = sink;
        for (int i = 0; i < 5; i++) { x = x * 31 + i; }
        sink = x;
    }
}
