package demo.abc;

import demo.util.Harness;

/**
 * The seed's call flow doing fixed work (arithmetic, no clock reads inside, so tracing
 * cannot shorten or lengthen the work): a() calls b() twice and c() once, b() calls c()
 * twice. Work per call in units: a 135 inclusive / 45 exclusive, b 40/20, c 10/10.
 *
 * The JVM first scales the unit so that one c() takes C_US microseconds, then measures
 * its own untraced time per call of a(), b() and c() (median of batches), prints READY
 * and waits for the tracer. Then it runs ITERATIONS calls of a() and prints
 * DONE a_ns=.. b_ns=.. c_ns=.. (untraced, per call) traced_a_ns=.. (per call, traced).
 * usage: FixedWork ITERATIONS C_US
 */
public final class FixedWork {
    static int unit = 100;  // loop iterations per unit of work
    static long sink;

    static void a() {
        long x = sink;
        for (int i = 0; i < 15 * unit; i++) { x = x * 31 + i; }
        b();
        for (int i = 0; i < 20 * unit; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        b();
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        sink = x;
    }

    static void b() {
        long x = sink;
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 10 * unit; i++) { x = x * 31 + i; }
        sink = x;
    }

    static void c() {
        long x = sink;
        for (int i = 0; i < 10 * unit; i++) { x = x * 31 + i; }
        sink = x;
    }

    // ns per call over n calls of one method (0: a, 1: b, 2: c).
    static double perCall(int which, int n) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            if (which == 0) a(); else if (which == 1) b(); else c();
        }
        return (System.nanoTime() - t0) / (double) n;
    }

    static double median(int which, int n, int batches) {
        double[] v = new double[batches];
        for (int i = 0; i < batches; i++) {
            v[i] = perCall(which, n);
        }
        java.util.Arrays.sort(v);
        return v[batches / 2];
    }

    static void run(int iterations) {
        for (int i = 0; i < iterations; i++) {
            a();
        }
    }

    public static void main(String[] args) throws Exception {
        int iterations = Integer.parseInt(args[0]);
        double cTargetNs = Double.parseDouble(args[1]) * 1000;
        for (int round = 0; round < 3; round++) {  // warm up (JIT) and scale the unit
            perCall(0, 3000);
            unit = Math.max(1, (int) Math.round(unit * cTargetNs / median(2, 2000, 5)));
        }
        perCall(0, 3000);
        double aNs = median(0, 300, 9), bNs = median(1, 1000, 9), cNs = median(2, 3000, 9);
        Harness.awaitGo();
        long t0 = System.nanoTime();
        run(iterations);
        double tracedA = (System.nanoTime() - t0) / (double) iterations;
        Harness.done("a_ns=" + Math.round(aNs) + " b_ns=" + Math.round(bNs) + " c_ns=" + Math.round(cNs)
                + " traced_a_ns=" + Math.round(tracedA) + " unit=" + unit + " sink=" + (sink & 1));
    }
}
