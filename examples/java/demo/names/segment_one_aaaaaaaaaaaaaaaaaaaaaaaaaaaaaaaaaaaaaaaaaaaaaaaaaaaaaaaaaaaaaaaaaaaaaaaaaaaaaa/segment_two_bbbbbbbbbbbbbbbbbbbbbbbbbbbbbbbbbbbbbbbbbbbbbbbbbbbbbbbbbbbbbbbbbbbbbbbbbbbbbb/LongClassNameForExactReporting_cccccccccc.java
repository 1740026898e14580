package demo.names.segment_one_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.segment_two_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb;

/** A class whose JVM name is longer than 200 bytes: reported byte for byte. */
public final class LongClassNameForExactReporting_cccccccccc {
    public static int ping(int x) {
        return x + 1;
    }
}
