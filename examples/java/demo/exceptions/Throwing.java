package demo.exceptions;

import demo.util.Harness;

/**
 * usage: Throwing ROUNDS N. Each round calls catcher(N), which calls thrower(i) for i in 0..N-1;
 * thrower spins 20 us and throws on even i. Calls: catcher ROUNDS, thrower ROUNDS * N.
 */
public final class Throwing {
    static int thrower(int i) {
        long end = System.nanoTime() + 20_000; while (System.nanoTime() < end) { }
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
