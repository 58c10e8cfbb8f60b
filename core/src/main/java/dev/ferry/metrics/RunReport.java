package dev.ferry.metrics;

import java.util.List;

/** A run's report: the four numbers per epoch and the advisor's findings. */
public record RunReport(List<EpochReport> epochs, List<String> advice) {
    public RunReport {
        epochs = List.copyOf(epochs);
        advice = List.copyOf(advice);
    }

    /** {@code {"epochs":[...],"advice":["..."]}} */
    public String toJson() {
        StringBuilder out = new StringBuilder("{\"epochs\":[");
        for (int i = 0; i < epochs.size(); i++) {
            out.append(i == 0 ? "" : ",").append(epochs.get(i).toJson());
        }
        out.append("],\"advice\":[");
        for (int i = 0; i < advice.size(); i++) {
            out.append(i == 0 ? "" : ",").append(quote(advice.get(i)));
        }
        return out.append("]}").toString();
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
