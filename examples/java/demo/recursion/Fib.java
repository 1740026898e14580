package demo.recursion;

import demo.util.Harness;

/** usage: Fib K M. fib(K) M times: M * (2 * fib(K + 1) - 1) calls; DONE wall_ns of the M calls. */
public final class Fib {
    static int fib(int k) {
        return k < 2 ? k : fib(k - 1) + fib(k - 2);
    }

    public static void main(String[] args) throws Exception {
        int k = Integer.parseInt(args[0]);
        int m = Integer.parseInt(args[1]);
        Harness.awaitGo();
        long start = System.nanoTime();
        int sum = 0;
        for (int i = 0; i < m; i++) {
            sum += fib(k);
        }
        Harness.done("wall_ns=" + (System.nanoTime() - start) + " sum=" + sum);
    }
}
