package demo.foreign;

import demo.foreign.traced.Client;
import demo.util.Harness;

/**
 * usage: ForeignMain N MS ITERS. Calls Client.call(MS, ITERS) N times (see Client).
 * DONE x=...
 */
public final class ForeignMain {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long ms = Long.parseLong(args[1]);
        long iters = Long.parseLong(args[2]);
        Harness.awaitGo();
        long x = 0;
        for (int i = 0; i < n; i++) {
            x += Client.call(ms, iters);
        }
        Harness.done("x=" + x + " calls=" + n);
    }
}
