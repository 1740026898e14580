package demo.exceptions;

import demo.util.Harness;

/**
 * usage: Throwing ROUNDS N. Each round calls catcher(N), which calls thrower(i) and tiny(i) for
 * i in 0..N-1; thrower spins 5 us and throws on even i; tiny (small enough for C1 to inline)
 * throws on even i too. Calls: catcher ROUNDS, thrower and tiny ROUNDS * N each.
 */
public final class Throwing {
    static final IllegalStateException PREALLOCATED = new IllegalStateException("tiny");

    static int tiny(int i) {
        if ((i & 1) == 0) {
            throw PREALLOCATED;
        }
        return i;
    }

    static int thrower(int i) {
        long end = System.nanoTime() + 5_000; while (System.nanoTime() < end) { }
        if (i % 2 == 0) {
            throw new IllegalStateException("even");
        }
        return i;
    }

    static int catcher(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            try {
                s += thrower(i);
            } catch (IllegalStateException e) {
                s--;
            }
            try {
                s += tiny(i);
            } catch (IllegalStateException e) {
                s++;
            }
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        Harness.awaitGo();
        long start = System.nanoTime();
        int s = 0;
        for (int r = 0; r < rounds; r++) {
            s += catcher(n);
        }
        Harness.done("wall_ns=" + (System.nanoTime() - start) + " s=" + s);
    }
}
