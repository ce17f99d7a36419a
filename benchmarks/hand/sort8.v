// Hand-pipelined sort8 (benchmarks/hand.py): Batcher's odd-even merge sort of eight bytes, one
// layer of compare-exchange elements per stage (4, 4, 2, 4, 2, 3 of the kernel's 19) in 6 stages,
// each layer's eight bytes registered, with the valid/ready handshake of our cores.
module sort8 (
    input  wire        clk,
    input  wire        rst,
    input  wire        in_valid,
    output wire        in_ready,
    input  wire [63:0] v,
    output wire        out_valid,
    input  wire        out_ready,
    output wire [63:0] out
);
    wire en = ~out_valid | out_ready;
    assign in_ready = en & ~rst;
    reg [5:0] valid;
    assign out_valid = valid[5];
    always @(posedge clk) begin
        if (rst) valid <= 6'b0;
        else if (en) valid <= {valid[4:0], in_valid & in_ready};
    end
    // one compare-exchange: afterwards w[i] <= w[j]
    function [63:0] cx(input [63:0] w, input integer i, input integer j);
        reg [7:0] a, b;
        begin
            a = w[8*i +: 8];
            b = w[8*j +: 8];
            cx = w;
            cx[8*i +: 8] = a < b ? a : b;
            cx[8*j +: 8] = a < b ? b : a;
        end
    endfunction
    reg [63:0] s0, s1, s2, s3, s4, s5;
    always @(posedge clk) if (en) begin
        s0 <= cx(cx(cx(cx(v, 0, 1), 2, 3), 4, 5), 6, 7);
        s1 <= cx(cx(cx(cx(s0, 0, 2), 1, 3), 4, 6), 5, 7);
        s2 <= cx(cx(s1, 1, 2), 5, 6);
        s3 <= cx(cx(cx(cx(s2, 0, 4), 1, 5), 2, 6), 3, 7);
        s4 <= cx(cx(s3, 2, 4), 3, 5);
        s5 <= cx(cx(cx(s4, 1, 2), 3, 4), 5, 6);
    end
    assign out = s5;
endmodule
