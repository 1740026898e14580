package demo.getters;

import demo.util.Harness;

/**
 * usage: Getters N. Calls four trivial getters (one field load each, no calls: one probe event
 * per call inside them, their own return) N times each, and sum() N times, which calls all four.
 * DONE x=...
 */
public final class Getters {
    private int a = 1;
    private int b = 2;
    private long c = 3;
    private long d = 4;

    int getA() {
        return a;
    }

    int getB() {
        return b;
    }

    long getC() {
        return c;
    }

    long getD() {
        return d;
    }

    long sum() {
        return getA() + getB() + getC() + getD();
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Getters g = new Getters();
        Harness.awaitGo();
        long x = 0;
        for (int i = 0; i < n; i++) {
            x += g.sum();
            g.a = i;
        }
        Harness.done("x=" + x);
    }
}
