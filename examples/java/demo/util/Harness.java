package demo.util;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

/** Start protocol of the workloads: print READY, wait for one line on stdin. Never traced. */
public final class Harness {
    private Harness() {}

    private static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in));

    public static void awaitGo() throws IOException {
        ready();
        STDIN.readLine();
    }

    public static void ready() {
        System.out.println("READY");
        System.out.flush();
    }

    /** The next line on stdin, null at its end. */
    public static String nextLine() throws IOException {
        return STDIN.readLine();
    }

    /** Waits for one more line on stdin. */
    public static void awaitLine() throws IOException {
        STDIN.readLine();
    }

    public static void done(String what) {
        // concat, not "+": linking a "+" call site (invokedynamic) makes about 200,000 JDK
        // calls, which would all trap inside the trace.
        System.out.println("DONE ".concat(what));
        System.out.flush();
    }

    private static long referenceSink;

    /**
     * ns one fixed run of register-only arithmetic takes now (about 0.5 ms): the host's
     * speed at this moment, which no probe touches (nothing is called inside the loop).
     * A workload times it before and during its traced run, so a test can tell the host
     * slowing down (another VM on the core, frequency) from the tracer's own cost.
     */
    public static long referenceNs() {
        long x = referenceSink;
        long t0 = System.nanoTime();
        for (int i = 0; i < 500_000; i++) {
            x = x * 31 + i;
        }
        long ns = System.nanoTime() - t0;
        referenceSink = x;
        return ns;
    }

    /** Busy-waits ns nanoseconds (used by untraced code only). */
    public static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }
}
