package demo.bench;

import demo.util.Harness;

/**
 * The DTrace example's A/B/C flow with fixed work (no clock reads inside): 16 probe events per a().
 * usage: AbcBench ITERATIONS WORK [hold]. Warms up with ITERATIONS calls of a(), prints READY,
 * waits for the tracer, then times ITERATIONS calls of a(): DONE ns_per_a=... events_per_a=16.
 * With "hold" it then waits for one more line before exiting (the benchmark reads the
 * programs' run-time statistics meanwhile).
 */
public final class AbcBench {
    static int work;
    static long sink;

    static void a() {
        long x = sink;
        for (int i = 0; i < 15 * work; i++) { x = x * 31 + i; }
        b();
        for (int i = 0; i < 20 * work; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 5 * work; i++) { x = x * 31 + i; }
        b();
        for (int i = 0; i < 5 * work; i++) { x = x * 31 + i; }
        sink = x;
    }

    static void b() {
        long x = sink;
        for (int i = 0; i < 5 * work; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 5 * work; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 10 * work; i++) { x = x * 31 + i; }
        sink = x;
    }

    static void c() {
        long x = sink;
        for (int i = 0; i < 10 * work; i++) { x = x * 31 + i; }
        sink = x;
    }

    static void loop(int iterations) {
        for (int i = 0; i < iterations; i++) {
            a();
        }
    }

    public static void main(String[] args) throws Exception {
        int iterations = Integer.parseInt(args[0]);
        work = Integer.parseInt(args[1]);
        loop(iterations);
        Harness.awaitGo();
        long start = System.nanoTime();
        loop(iterations);
        long ns = System.nanoTime() - start;
        Harness.done("ns_per_a=" + (ns / (double) iterations) + " events_per_a=16 sink=" + sink);
        if (args.length > 2 && args[2].equals("hold")) {
            Harness.awaitLine();
        }
    }
}
