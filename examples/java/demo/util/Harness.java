package demo.util;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

/** Start protocol of the workloads: print READY, wait for one line on stdin. Never traced. */
public final class Harness {
    private Harness() {}

    private static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in));

    public static void awaitGo() throws IOException {
        System.out.println("READY");
        System.out.flush();
        STDIN.readLine();
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

    /** Busy-waits ns nanoseconds (used by untraced code only). */
    public static void spin(long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }
}
